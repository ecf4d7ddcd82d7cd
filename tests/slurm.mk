# tests: slurm
