#!/bin/bash
# --gpus=TYPE:N: N GPUs of that type for the whole job (TresPerJob); sbatch
# gives the job SLURM_GPUS as written.
# slurm: sbatch --gpus=h100:2: SLURM_GPUS=h100:2, 2 CUDA devices; scontrol: TresPerJob=gres:gpu:h100:2, TRES ...gres/gpu=2
# expect: SLURM_GPUS=h100:2
# expect: GPUS=2
# expect: TresPerJob=gres:gpu:h100:2
# expect: gres/gpu=2
#SBATCH -J compat-gpustype
#SBATCH --gpus=h100:2
echo "SLURM_GPUS=$SLURM_GPUS"
echo "GPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)"
scontrol show job "$SLURM_JOB_ID" | grep -o 'TresPerJob=[^ ]*'
scontrol show job "$SLURM_JOB_ID" | grep -o 'TRES=[^ ]*' | grep -o 'gres/gpu=[0-9]*'
