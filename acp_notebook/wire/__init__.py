"""The wire: every shape that crosses a process, and the pure rules on it.

Contracts (stream events, client requests, the fold snapshot, the saved chat, kernel
queries), the fold, bounded JSON parsing, clipping, attachment blocks, merging runs of
text chunks, the kernel's proof of identity, and the exceptions an ack's error becomes.
Pure and sans-I/O: it imports nothing else of this package.
"""
