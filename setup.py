"""The wheel's package list; everything else about the build is in pyproject.toml (see its comment there).

The repository keeps api/, cli/, catalog/ and validation/ beside sizer/; the wheel installs each inside
the sizer package (sizer.api, ...). pyproject.toml can map a package to a folder but cannot find the
packages under a mapped folder, so they are found here: every folder is a package (data-only folders
such as api/static as namespace packages), and a new folder installs without an edit.
"""
from setuptools import find_namespace_packages, setup

INSIDE = ("api", "cli", "catalog", "validation")  # repository folders installed as sizer.<folder>
NOT_SHIPPED = ["validation.reports", "validation.reports.*"]  # dated report files, not code

packages = find_namespace_packages(include=["sizer", "sizer.*"])
for folder in INSIDE:
    packages += [f"sizer.{name}" for name in find_namespace_packages(include=[folder, f"{folder}.*"], exclude=NOT_SHIPPED)]

setup(packages=packages, package_dir={f"sizer.{folder}": folder for folder in INSIDE})
