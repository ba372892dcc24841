"""Publishing a finished run: the gallery's images and records, and the docs' generated blocks from the
committed records.

Layer 9: may import everything below it but the command line.
"""
