#!/bin/bash
#SBATCH --comment="ticket 4711"
#SBATCH --chdir=/scratch/run42
#SBATCH -t 5
# expect: comment=ticket 4711 workdir=/scratch/run42
ls
