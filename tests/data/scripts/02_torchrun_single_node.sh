#!/bin/bash
#SBATCH -J finetune
#SBATCH -A vision
#SBATCH --gres=gpu:8
#SBATCH -c 96
#SBATCH --mem=900G
#SBATCH -t 12:00:00
# expect: name=finetune account=vision gpus_per_node=8 gpu_type=(null) cpus_per_task=96
# expect: mem_per_node_mib=921600 time_limit_s=43200
torchrun --standalone --nproc_per_node=8 finetune.py --epochs 3
