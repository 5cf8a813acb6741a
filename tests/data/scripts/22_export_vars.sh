#!/bin/bash
#SBATCH --export=ALL,WANDB_MODE=offline,HF_HOME=/scratch/hf
#SBATCH -t 5
# expect: export=ALL,WANDB_MODE=offline,HF_HOME=/scratch/hf
python -c 'import os; print(os.environ["WANDB_MODE"])'
