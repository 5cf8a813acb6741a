#!/bin/bash
# --ntasks-per-gpu: the task count is N times the job's GPUs (2 nodes x 2 GPUs x 2).
# slurm: sbatch -N 2 --gpus-per-node=2 --ntasks-per-gpu=2: SLURM_NTASKS=8 SLURM_NTASKS_PER_GPU=2; scontrol: NumTasks=8 NtasksPerTRES=2
# expect: SLURM_NTASKS=8
# expect: SLURM_NTASKS_PER_GPU=2
# expect: NumTasks=8
#SBATCH -J compat-npg
#SBATCH -N 2
#SBATCH --gpus-per-node=2
#SBATCH --ntasks-per-gpu=2
echo "SLURM_NTASKS=$SLURM_NTASKS"
echo "SLURM_NTASKS_PER_GPU=$SLURM_NTASKS_PER_GPU"
scontrol show job "$SLURM_JOB_ID" | grep -o 'NumTasks=[^ ]*'
