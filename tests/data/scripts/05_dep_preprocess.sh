#!/bin/bash
#SBATCH --job-name=preprocess
#SBATCH --cpus-per-task=32
#SBATCH --mem=128G
#SBATCH --time=1:00:00
# expect: name=preprocess cpus_per_task=32 mem_per_node_mib=131072 time_limit_s=3600
python tokenize_dataset.py --out /data/tokens
