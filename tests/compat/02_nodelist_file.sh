#!/bin/bash
# --nodelist with a path: a file of names (blanks, commas, newlines), as Slurm reads it;
# without -N the node count is the list's.
# slurm: printf 'gpu0001, gpu0003\n' > n2.txt; sbatch -w ./n2.txt: accepted, 2 nodes gpu[0001,0003]
# expect: SLURM_JOB_NODELIST=dev[1,4]
# expect: SLURM_JOB_NUM_NODES=2
#SBATCH -J compat-nodefile
#SBATCH --nodelist=./nodes.txt
echo "SLURM_JOB_NODELIST=$SLURM_JOB_NODELIST"
echo "SLURM_JOB_NUM_NODES=$SLURM_JOB_NUM_NODES"
