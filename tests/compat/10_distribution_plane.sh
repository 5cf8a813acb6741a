#!/bin/bash
# -m plane=2: ranks dealt two at a time.
# slurm: sbatch -N 2 --ntasks-per-node=3 -m plane=2, srun: 0,1,4 on gpu0001 and 2,3,5 on gpu0002
# expect: ranks=0:1,1:1,2:2,3:2,4:1,5:2
#SBATCH -J compat-plane
#SBATCH -N 2
#SBATCH --ntasks-per-node=3
#SBATCH --distribution=plane=2
out=$(srun bash -c 'echo $SLURM_PROCID $SLURM_NODEID' | sort -n | awk '{printf "%s%s:%s", (NR > 1 ? "," : ""), $1, $2 + 1}')
echo "ranks=$out"
