"""The bundled sample comparison, installed as package data of ``profdiff.samples``.

``File > Open sample comparison`` finds the files through
:func:`profdiff.viewer.bundled.sample_pair` (``importlib.resources``), so they are there in
a plain ``pip install`` too, not only in the source tree.
"""
