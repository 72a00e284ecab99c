"""Stage ohdsi: OHDSI SQL (SqlRender templates, SQL Server scripts) to one plain SQL Server query.

- :mod:`curate.ohdsi.template`: ``{DEFAULT ...}`` values and where ``@name`` stands;
- :mod:`curate.ohdsi.blocks`: SqlRender's ``{condition} ? {a} : {b}`` blocks resolved;
- :mod:`curate.ohdsi.conditions`: SqlRender's condition evaluation, quirks included;
- :mod:`curate.ohdsi.render`: a template rendered as SqlRender renders it, a record rendered;
- :mod:`curate.ohdsi.script`: a multi-statement script made one query (temp tables as CTEs).
"""
