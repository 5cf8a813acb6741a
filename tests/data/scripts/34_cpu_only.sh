#!/bin/bash
#SBATCH -c 4
#SBATCH --mem=8G
#SBATCH -t 15
# expect: cpus_per_task=4 mem_per_node_mib=8192 gpus=0 gpus_per_node=0
python make_plots.py
