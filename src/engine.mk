# Placement engine, layouts, rank order and cost model (added to the core library).
