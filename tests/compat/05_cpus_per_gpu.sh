#!/bin/bash
# --cpus-per-gpu: the CPUs follow the GPUs.
# slurm: sbatch --gpus=1 --cpus-per-gpu=2: SLURM_CPUS_PER_GPU=2 SLURM_JOB_CPUS_PER_NODE=2; scontrol: CpusPerTres=gres:gpu:2
# expect: SLURM_CPUS_PER_GPU=4
# expect: SLURM_JOB_CPUS_PER_NODE=8
# expect: CpusPerTres=gres:gpu:4
#SBATCH -J compat-cpg
#SBATCH --gpus=2
#SBATCH --cpus-per-gpu=4
echo "SLURM_CPUS_PER_GPU=$SLURM_CPUS_PER_GPU"
echo "SLURM_JOB_CPUS_PER_NODE=$SLURM_JOB_CPUS_PER_NODE"
scontrol show job "$SLURM_JOB_ID" | grep -o 'CpusPerTres=[^ ]*'
