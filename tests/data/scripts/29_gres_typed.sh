#!/bin/bash
#SBATCH --gres=gpu:h100:4
#SBATCH -c 32
#SBATCH -t 3:00:00
# expect: gpus_per_node=4 gpu_type=h100 cpus_per_task=32
python train.py
