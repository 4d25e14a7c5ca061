#!/usr/bin/env python3
"""Finds loops among the files of a folder: file A uses file B when A.o
refers to a non-static symbol that B.o defines.

usage: deploops.py OBJDIR FOLDER   (e.g. build/obj collector)

Prints each loop (a set of files that reach one another) with the edges
and the symbols behind them, and exits 1 when there is one."""
import subprocess, sys, os, collections

objdir, folder = sys.argv[1], sys.argv[2]
d = os.path.join(objdir, folder)
defs, undef = {}, collections.defaultdict(set)
files = sorted(f for f in os.listdir(d) if f.endswith('.o'))
for f in files:
    name = f[:-2]
    out = subprocess.run(['nm', os.path.join(d, f)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == 'U':
            undef[name].add(parts[1])
        elif len(parts) == 3 and parts[1] in 'TDBRVWGS' :
            defs.setdefault(parts[2], name)
edges = collections.defaultdict(set)
for a, syms in undef.items():
    for s in syms:
        b = defs.get(s)
        if b and b != a:
            edges[a].add(b)
names = [f[:-2] for f in files]
# Tarjan
index, low, stack, on, sccs, i = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def sc(v):
    index[v] = low[v] = i[0]; i[0] += 1; stack.append(v); on.add(v)
    for w in sorted(edges[v]):
        if w not in index:
            sc(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        sccs.append(sorted(comp))
for v in names:
    if v not in index: sc(v)
loops = [c for c in sccs if len(c) > 1]
for c in loops:
    print(folder + ': loop: ' + ' '.join(c))
    for a in c:
        for b in sorted(edges[a] & set(c)):
            syms = sorted(s for s in undef[a] if defs.get(s) == b)
            print('   %s -> %s (%s)' % (a, b, ', '.join(syms[:4]) + (' ...' if len(syms) > 4 else '')))
sys.exit(1 if loops else 0)
