"""Prints the directory, relative to the install prefix argv[1], where `cmake --install` puts the
schedsim package: the interpreter's site directory when it lies under that prefix (Debian:
/usr/local -> lib/python3.X/dist-packages, /usr -> lib/python3/dist-packages), else the
posix_prefix scheme's (lib/python3.X/site-packages). python/CMakeLists.txt."""

import os
import sys
import sysconfig

prefix = os.path.normpath(sys.argv[1])
candidates = []
if "deb_system" in sysconfig.get_scheme_names() and prefix == os.path.normpath(sys.base_prefix):
    candidates.append(sysconfig.get_path("platlib", "deb_system"))  # Debian's own packages' directory
candidates.append(sysconfig.get_paths()["platlib"])
for c in candidates:
    c = os.path.normpath(c)
    if c.startswith(prefix.rstrip("/") + "/"):
        print(os.path.relpath(c, prefix))
        break
else:
    print(os.path.relpath(sysconfig.get_path("platlib", "posix_prefix", vars={"base": prefix, "platbase": prefix}),
                          prefix))
