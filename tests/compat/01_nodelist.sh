#!/bin/bash
# -w with a hostlist: the job runs on exactly the listed nodes.
# slurm: sbatch -w gpu[0002-0003] -N 2: SLURM_JOB_NODELIST=gpu[0002-0003]; ReqNodeList=gpu[0002-0003]
# expect: SLURM_JOB_NODELIST=dev[2-3]
# expect: SLURM_JOB_NUM_NODES=2
# expect: ReqNodeList=dev[2-3]
#SBATCH -J compat-nodelist
#SBATCH -N 2
#SBATCH -w dev[2-3]
echo "SLURM_JOB_NODELIST=$SLURM_JOB_NODELIST"
echo "SLURM_JOB_NUM_NODES=$SLURM_JOB_NUM_NODES"
scontrol show job "$SLURM_JOB_ID" | grep -o 'ReqNodeList=[^ ]*'
