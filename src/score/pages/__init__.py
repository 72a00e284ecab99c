"""Review pages: one self-contained ``report.html`` for a scoring run, a comparison of two
runs or a curation report (styles, script and data inline; no request leaves the file).

:mod:`score.pages.document` assembles a page from the templates in ``assets/``;
:mod:`score.pages.parts` writes the summary as plain HTML (readable without scripts);
:mod:`score.pages.sql_text` formats SQL; :mod:`score.pages.scoring_page`,
:mod:`score.pages.compare_page` and :mod:`score.pages.curation_page` build each kind.
"""
