#!/bin/bash
# --gpus=0: a job without GPUs, not an error (scripts template the count).
# slurm: sbatch --gpus=0: runs; no CUDA_VISIBLE_DEVICES; scontrol TRES=cpu=1,node=1,billing=1 (no gres/gpu)
# expect: CUDA_VISIBLE_DEVICES=unset
# expect: GPU_TRES=0
#SBATCH -J compat-gpu0
#SBATCH --gpus=0
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset}"
echo "GPU_TRES=$(scontrol show job "$SLURM_JOB_ID" | grep -c 'gres/gpu')"
