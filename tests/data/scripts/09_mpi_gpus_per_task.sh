#!/bin/bash
#SBATCH --job-name=lammps
#SBATCH --ntasks=16
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=8
#SBATCH --time=06:00:00
# expect: name=lammps ntasks=16 gpus_per_task=1 cpus_per_task=8 time_limit_s=21600
srun --mpi=pmix lmp -k on g 1 -sf kk -in in.lj
