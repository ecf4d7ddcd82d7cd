# man pages
dist_man_MANS += man/topoaware.1
