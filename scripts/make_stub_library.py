#!/usr/bin/env python3
"""Writes stand-ins for shared libraries that a bundle links but never calls.

    make_stub_library.py OUT_DIR REAL_LIBRARY... -- FILE...

Used by scripts/bundle_closure.sh (BUNDLE_STUBS). OpenCV's image codecs link
GDAL, GDCM (DICOM) and OpenEXR, which pull in some 150 MB of libraries (PDF,
HDF5, NetCDF, PROJ, ...) for formats the studio never reads; Qt Core links ICU,
whose 31 MB data library is only read for collation and legacy codecs. The
stand-in has the real library's soname and defines exactly the symbols that
FILE... import from it (each FILE's imports and version needs are read once, for
all the libraries): functions that do nothing and return 0 (OpenCV calls
GDALAllRegister() when its codecs start), data objects that are zero (at most
4 KiB each). The loader is satisfied and the real library's own dependencies
drop out of the closure. Only for libraries whose features are never used: a
real call would get 0 (NULL, false, an error code) back.

Refuses (exit 1) when a FILE asks for a symbol version of a library (the
loader would reject an unversioned stand-in). Prints each stand-in's path.
"""
import os
import re
import subprocess
import sys
import tempfile


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def soname(path):
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", run("readelf", "-d", path))
    return m.group(1) if m else os.path.basename(path)


def defined_symbols(path):
    """name -> (is_function, size) of the dynamic symbols the library defines."""
    out = {}
    for line in run("nm", "-D", "--defined-only", "-S", path).splitlines():
        parts = line.split()
        if len(parts) == 4:
            _, size, kind, name = parts
            size = int(size, 16)
        elif len(parts) == 3:
            _, kind, name = parts
            size = 0
        else:
            continue
        name = name.split("@")[0]
        out[name] = (kind in "TtWiI", size)
    return out


def imported_symbols(path):
    names = set()
    for line in run("nm", "-D", "--undefined-only", path).splitlines():
        parts = line.split()
        if parts:
            names.add(parts[-1].split("@")[0])
    return names


def versioned_needs(path):
    """Sonames of the libraries whose symbol versions `path` asks for."""
    return set(re.findall(r"File: (\S+)\s+Cnt: [1-9]", run("readelf", "-V", path)))


def write_stub(name, defined, wanted, out_dir):
    lines = []
    for symbol in sorted(wanted):
        function, size = defined[symbol]
        quoted = '"%s"' % symbol
        if function:
            lines += ["\t.text", "\t.globl %s" % quoted, "\t.type %s, @function" % quoted, "%s:" % quoted, "\txorl %eax, %eax", "\tret"]
        else:
            size = max(8, min(size, 4096))
            lines += ["\t.data", "\t.balign 16", "\t.globl %s" % quoted, "\t.type %s, @object" % quoted,
                      "\t.size %s, %d" % (quoted, size), "%s:" % quoted, "\t.zero %d" % size]
    lines.append('\t.section .note.GNU-stack,"",@progbits')
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, name)
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "stub.s")
        with open(source, "w") as f:
            f.write("\n".join(lines) + "\n")
        run("cc", "-shared", "-nostdlib", "-Wl,-soname," + name, "-o", target, source)
    return target


def main():
    args = sys.argv[1:]
    if "--" not in args or args.index("--") < 2 or args.index("--") == len(args) - 1:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    split = args.index("--")
    out_dir, reals, files = args[0], args[1:split], args[split + 1:]
    # Each FILE read once: its imports and the sonames whose versions it needs.
    imports = {f: imported_symbols(f) for f in files}
    needs = {f: versioned_needs(f) for f in files}
    for real in reals:
        name = soname(real)
        defined = defined_symbols(real)
        wanted = set()
        for f in files:
            if os.path.realpath(f) == os.path.realpath(real):
                continue
            if name in needs[f]:
                sys.exit("make_stub_library: %s asks for symbol versions of %s; cannot stand in for it" % (f, name))
            wanted |= imports[f] & defined.keys()
        print(write_stub(name, defined, wanted, out_dir))


if __name__ == "__main__":
    main()
