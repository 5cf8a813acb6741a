#!/bin/bash
#SBATCH -q high
#SBATCH -p urgent
#SBATCH --gres=gpu:8
#SBATCH -t 6:00:00
# expect: qos=high partition=urgent gpus_per_node=8 time_limit_s=21600
python hotfix_eval.py
