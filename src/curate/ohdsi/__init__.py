"""Stage ohdsi: OHDSI SQL (SqlRender templates, SQL Server scripts) to one plain SQL Server query.

- :mod:`curate.ohdsi.template`: SqlRender template tokens and tree;
- :mod:`curate.ohdsi.conditions`: SqlRender `{condition} ?` evaluation;
- :mod:`curate.ohdsi.render`: parameters substituted, blocks resolved, a record rendered;
- :mod:`curate.ohdsi.script`: a multi-statement script made one query (temp tables as CTEs).
"""
