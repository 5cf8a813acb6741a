#!/bin/bash
# --mem-per-gpu with --gpus: memory follows the GPUs (MiB in the environment).
# slurm: sbatch --gpus=2 --mem-per-gpu=10G: SLURM_MEM_PER_GPU=10240; scontrol: MemPerTres=gres:gpu:10240
# expect: SLURM_MEM_PER_GPU=10240
# expect: MemPerTres=gres:gpu:10240
#SBATCH -J compat-mpg
#SBATCH --gpus=2
#SBATCH --mem-per-gpu=10G
echo "SLURM_MEM_PER_GPU=$SLURM_MEM_PER_GPU"
scontrol show job "$SLURM_JOB_ID" | grep -o 'MemPerTres=[^ ]*'
