#!/bin/bash
# srun -m inside a block job: the step's own distribution.
# slurm: sbatch -N 2 --ntasks-per-node=2, srun -m cyclic: ranks 0,2 on gpu0001 and 1,3 on gpu0002; SLURM_DISTRIBUTION=cyclic in the tasks
# expect: ranks=0:1,1:2,2:1,3:2
# expect: step-dist=cyclic
# expect: local-dist=plane=2
#SBATCH -J compat-srun-m
#SBATCH -N 2
#SBATCH --ntasks-per-node=2
out=$(srun -m cyclic bash -c 'echo $SLURM_PROCID $SLURM_NODEID' | sort -n | awk '{printf "%s%s:%s", (NR > 1 ? "," : ""), $1, $2 + 1}')
echo "ranks=$out"
echo "step-dist=$(srun -m cyclic bash -c 'echo $SLURM_DISTRIBUTION' | sort -u)"
echo "local-dist=$(srun -N 1 -n 1 -m plane=2 bash -c 'echo $SLURM_DISTRIBUTION')"
