#!/usr/bin/env python3
"""Builds a wheel of the schedsim package from a CMake build (docs/python.md "A wheel").

    python3 python/make_wheel.py BUILD/python OUT_DIR

BUILD/python holds the built package (schedsim/__init__.py, schedsim/_schedsim*.so) and its
metadata (schedsim-VERSION.dist-info/METADATA), as CMake leaves them. The wheel (PEP 427) is
schedsim-VERSION-TAG-TAG-PLATFORM.whl for the interpreter running this script, which must be the
one the extension was built for (CMake's Python3_EXECUTABLE): cp311-cp311-linux_x86_64 for
Debian 12's python3. A platform wheel, not a manylinux one: it installs on machines with the
same Python version and system libraries (the Debian release it was built on). Prints the path.
Exit 2 with one line when the build directory lacks a file or holds a module for another Python.
"""

import base64
import hashlib
import os
import sys
import sysconfig
import zipfile


def fail(msg):
    print("make_wheel: " + msg, file=sys.stderr)
    sys.exit(2)


def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main():
    if len(sys.argv) != 3:
        fail("usage: make_wheel.py BUILD/python OUT_DIR")
    src, out_dir = sys.argv[1], sys.argv[2]
    pkg = os.path.join(src, "schedsim")
    infos = sorted(d for d in os.listdir(src) if d.startswith("schedsim-") and d.endswith(".dist-info")) if os.path.isdir(src) else []
    if len(infos) != 1:
        fail("%s: no single schedsim-VERSION.dist-info (build the _schedsim target first)" % src)
    info = infos[0]
    version = info[len("schedsim-"):-len(".dist-info")]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = "_schedsim" + suffix
    files = sorted(f for f in os.listdir(pkg) if f.endswith(".py")) if os.path.isdir(pkg) else []
    if "__init__.py" not in files or not os.path.isfile(os.path.join(pkg, module)):
        fail("%s: needs __init__.py and %s (the extension for this Python, %s)" % (pkg, module, sys.version.split()[0]))
    tag = "cp%d%d" % sys.version_info[:2]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    name = "schedsim-%s-%s-%s-%s.whl" % (version, tag, tag, platform)
    with open(os.path.join(src, info, "METADATA"), "rb") as f:
        metadata = f.read()
    wheel = ("Wheel-Version: 1.0\nGenerator: schedsim make_wheel.py\nRoot-Is-Purelib: false\nTag: %s-%s-%s\n"
             % (tag, tag, platform)).encode()
    entries = [("schedsim/" + f, open(os.path.join(pkg, f), "rb").read()) for f in files + [module]]
    entries += [(info + "/METADATA", metadata), (info + "/WHEEL", wheel)]
    record = "".join("%s,%s,%d\n" % (n, digest(d), len(d)) for n, d in entries) + info + "/RECORD,,\n"
    entries.append((info + "/RECORD", record.encode()))
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name)
    tmp = path + ".part"
    # Reproducible: fixed timestamps and permissions, entries in a fixed order.
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in entries:
            zi = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            zi.external_attr = (0o755 if n.endswith(".so") else 0o644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    os.replace(tmp, path)
    print(path)


if __name__ == "__main__":
    main()
