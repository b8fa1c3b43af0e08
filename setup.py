"""Builds the compiled dedup feature pass (dedup/_features.pyx, Cython); everything else
is in pyproject.toml. ``pip install -e .`` runs it; in a source tree without installing:
``python setup.py build_ext --inplace``."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("dedup._features", ["dedup/_features.pyx"], extra_compile_args=["-O3"])],
        compiler_directives={"language_level": "3"},
    ),
)
