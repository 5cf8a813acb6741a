#!/bin/bash
#SBATCH --mail-type=END,FAIL
#SBATCH --mail-user=alice@example.org
#SBATCH -t 5
# expect: mail_type=END,FAIL mail_user=alice@example.org
echo done
