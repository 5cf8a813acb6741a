#!/bin/bash
# --gres=gpu:TYPE:N: N GPUs of that type on each node (TresPerNode).
# slurm: sbatch --gres=gpu:h100:2: SLURM_GPUS_ON_NODE=2, 2 CUDA devices; scontrol: TresPerNode=gres:gpu:h100:2, TRES ...gres/gpu=2
# expect: SLURM_GPUS_ON_NODE=2
# expect: GPUS=2
# expect: TresPerNode=gres:gpu:h100:2
# expect: gres/gpu=2
#SBATCH -J compat-grestype
#SBATCH --gres=gpu:h100:2
echo "SLURM_GPUS_ON_NODE=$SLURM_GPUS_ON_NODE"
echo "GPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)"
scontrol show job "$SLURM_JOB_ID" | grep -o 'TresPerNode=[^ ]*'
scontrol show job "$SLURM_JOB_ID" | grep -o 'TRES=[^ ]*' | grep -o 'gres/gpu=[0-9]*'
