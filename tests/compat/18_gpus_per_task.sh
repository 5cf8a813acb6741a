#!/bin/bash
# --gpus-per-task with -n: each task's GPUs; the job's are their sum.
# slurm: sbatch -n 2 --gpus-per-task=1: SLURM_NTASKS=2 SLURM_GPUS_PER_TASK=1; scontrol: TresPerTask=gres:gpu:1, TRES ...gres/gpu=2
# expect: SLURM_NTASKS=2
# expect: SLURM_GPUS_PER_TASK=1
# expect: TresPerTask=gres:gpu:1
# expect: gres/gpu=2
#SBATCH -J compat-gpt
#SBATCH -n 2
#SBATCH --gpus-per-task=1
echo "SLURM_NTASKS=$SLURM_NTASKS"
echo "SLURM_GPUS_PER_TASK=$SLURM_GPUS_PER_TASK"
scontrol show job "$SLURM_JOB_ID" | grep -o 'TresPerTask=[^ ]*'
scontrol show job "$SLURM_JOB_ID" | grep -o 'TRES=[^ ]*' | grep -o 'gres/gpu=[0-9]*'
