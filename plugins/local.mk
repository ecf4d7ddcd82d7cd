# Slurm plugins
