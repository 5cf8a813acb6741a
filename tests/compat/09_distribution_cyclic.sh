#!/bin/bash
# -m cyclic: srun's ranks dealt round robin over the nodes.
# slurm: sbatch -N 2 --ntasks-per-node=2 -m cyclic, srun: ranks 0,2 on gpu0001 and 1,3 on gpu0002; SLURM_DISTRIBUTION=cyclic
# expect: SLURM_DISTRIBUTION=cyclic
# expect: ranks=0:1,1:2,2:1,3:2
#SBATCH -J compat-cyclic
#SBATCH -N 2
#SBATCH --ntasks-per-node=2
#SBATCH -m cyclic
echo "SLURM_DISTRIBUTION=$SLURM_DISTRIBUTION"
out=$(srun bash -c 'echo $SLURM_PROCID $SLURM_NODEID' | sort -n | awk '{printf "%s%s:%s", (NR > 1 ? "," : ""), $1, $2 + 1}')
echo "ranks=$out"
