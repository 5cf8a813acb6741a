#!/bin/bash
#SBATCH -n 4
#SBATCH -c 4
#SBATCH --mem-per-cpu=4G
#SBATCH -t 2:00:00
# expect: ntasks=4 cpus_per_task=4 mem_per_cpu_mib=4096 time_limit_s=7200
srun ./simulate --steps 100000
