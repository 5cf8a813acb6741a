#!/bin/bash
#SBATCH --job-name=llama-pretrain
#SBATCH --account=llm
#SBATCH --partition=batch
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=64
#SBATCH --mem=0
#SBATCH --time=2-00:00:00
#SBATCH --output=logs/%x-%j.out
# expect: name=llama-pretrain account=llm nodes_min=4 nodes_max=4 ntasks_per_node=1
# expect: gpus_per_node=8 cpus_per_task=64 mem_per_node_mib=0 time_limit_s=172800
# expect: stdout_path=logs/%x-%j.out
set -euo pipefail
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500
srun torchrun --nnodes="$SLURM_NNODES" --nproc_per_node=8 \
  --rdzv_id="$SLURM_JOB_ID" --rdzv_backend=c10d --rdzv_endpoint="$MASTER_ADDR:$MASTER_PORT" \
  train.py --config configs/llama-7b.yaml
