"""profdiff desktop viewer (PySide6): thin Qt adapters over the Qt-free core.

Architecture (napari-style: the core knows nothing of Qt, Qt classes only adapt it):

* :mod:`viewer.compare` builds a :class:`~viewer.compare.Comparison` (numpy arrays per
  aligned row).  Nothing here copies it into Python objects per row.
* :mod:`.layout` - :class:`RowLayout` (Qt-free): sorted, filtered child lists per parent,
  computed lazily with numpy and cached; filter = substring/regex over *distinct*
  names/modules mapped to rows, ancestors of matches kept.  ``path_hashes``/``map_rows``
  carry expansion and selection across a reload; ``path_to_max``/``subtree_max`` find the
  path to the biggest change.
* :mod:`.models` - :class:`ComparisonTreeModel`, the ONE ``QAbstractItemModel``:
  ``internalId`` = union-row id, structure from a (possibly shared) ``RowLayout``,
  cells from per-column numpy arrays formatted by :mod:`viewer.units`, Δ colours from
  :class:`viewer.colors.DivergingScale`.  ``Column`` specs choose what a model shows
  (``pane_columns``, ``diff_columns``).  Sorting is inside the model (no proxy).
* :mod:`.views` - tabs: ``SideBySideView`` (two panes sharing one ``RowLayout`` so rows
  align; expansion/selection/scroll/column widths mirrored by row id), ``DiffTreeView``
  (base/new/Δ/Δ% + legend), ``FlatView`` (per cost centre, largest real change first,
  call sites).  Views talk by row ids: ``rowSelected(int)`` / ``select_row(int)``.
* :mod:`.widgets` - legend, summary bar, details pane, message bar, drop overlay,
  empty state.
* :mod:`.loader` - ``load_and_align`` (builds a :class:`viewer.session.Session` from the
  window's spec) and ``LoadTask`` (QThreadPool worker with progress and cancel); the GUI
  thread only swaps models.
* :mod:`.main_window` - ``MainWindow``, a shell over one ``Session`` (``session``) and one
  ``ViewState`` (``view_state``): tabs, the details pane, status.  Its parts:
  :mod:`.actions` (menus, toolbar), ``window_loading``, ``window_rules``, ``window_noise``,
  ``window_navigation``, ``window_io`` (exports, drops), ``window_settings``.  Extension
  points: ``add_tab(widget, title)`` / ``remove_tab(widget)``, ``set_runs(profiles,
  keep_state=True)``, ``open_spec(spec, view)``; signals ``comparisonChanged(object)`` and
  ``viewStateChanged(object)``.  A format tab built from the session gets the window's
  view state through ``follow(view_state)`` and asks for details with
  ``detailsRequested(cmp, row)``.
* :mod:`.app` - ``main(argv)``: ``profdiff [FILES...] [options]`` (the shared options of
  :mod:`viewer.options` plus ``--screenshot OUT.png --view ... --size WxH --expand``).

Optional tabs written elsewhere (``flame_view.FlameView``) are imported lazily and the
window works without them.
"""
