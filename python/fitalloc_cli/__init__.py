"""The fitalloc command: run a program under fitalloc, replay its trace under every policy of
the lab, draw the heap, print statistics. One module per subcommand (run, replay, heapmap for
map, compare, stats), shared ones for finding the library and fitalloc-replay (locate), running
it (replay_tool), its table (rows) and the maps (mapdata, mapdraw, plotting); cli.py holds the
top-level parser and `where`. Python 3 standard library, plus matplotlib (and numpy, which it
brings) for the drawings only. See docs/command.md."""
