"""The worked examples of the vocabulary document: a title, what it shows, the SQL.

Each must return rows on the embedded database; :mod:`curate.grounding.vocabulary_doc`
runs them and fails loudly if one does not.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VocabExample:
    """A worked example: a title, what it shows, and the SQL that shows it."""

    title: str
    text: str
    sql: str


#: The worked examples, in the order the document shows them.  Each must return rows
#: on the embedded database.
EXAMPLES: tuple[VocabExample, ...] = (
    VocabExample(
        "Find a concept by its name",
        "Questions name conditions, drugs and tests in words; queries filter on concept "
        "ids. Look the id up in `cdm.concept`, preferring standard concepts "
        "(`standard_concept = 'S'`), because the clinical tables' main `*_concept_id` "
        "columns hold standard concepts. Names are matched case-insensitively with "
        "`ILIKE`, since `=` and `LIKE` are case-sensitive in DuckDB.",
        """
SELECT concept_id, concept_name, domain_id, vocabulary_id, concept_class_id
FROM cdm.concept
WHERE concept_name ILIKE '%diabetes%'
  AND standard_concept = 'S'
ORDER BY concept_id
""",
    ),
    VocabExample(
        "Count the persons with a condition",
        "With the concept id in hand, filter the event table on its main concept "
        "column and count distinct persons (a person can have the same condition "
        "recorded many times). 201826 is the standard SNOMED concept 'Type 2 diabetes "
        "mellitus'.",
        """
SELECT count(DISTINCT person_id) AS persons, count(*) AS records
FROM cdm.condition_occurrence
WHERE condition_concept_id = 201826
""",
    ),
    VocabExample(
        "Give coded values their names",
        "Every `*_concept_id` column joins to `cdm.concept` for a readable name. Here the "
        "visit kinds of `cdm.visit_occurrence`.",
        """
SELECT v.visit_concept_id, c.concept_name, count(*) AS visits
FROM cdm.visit_occurrence AS v
JOIN cdm.concept AS c ON c.concept_id = v.visit_concept_id
GROUP BY v.visit_concept_id, c.concept_name
ORDER BY visits DESC, v.visit_concept_id
""",
    ),
    VocabExample(
        "Standard and non-standard concepts",
        "`standard_concept` is 'S' for a standard concept (the one analyses use), 'C' "
        "for a classification concept (a grouping that only appears in hierarchies) and "
        "NULL for a non-standard one (a source code that should be mapped to a standard "
        "concept).",
        """
SELECT coalesce(standard_concept, 'NULL (non-standard)') AS standard_concept,
       count(*) AS concepts
FROM cdm.concept
GROUP BY ALL
ORDER BY concepts DESC
""",
    ),
    VocabExample(
        "Source concepts beside standard concepts",
        "Besides its main concept column, an event row keeps the source code "
        "(`condition_source_value`) and that code's own concept "
        "(`condition_source_concept_id`). When the source code could not be mapped to "
        "a standard concept, the main column is 0 and only the source columns say what "
        "was recorded, so a question about such a code has to filter on the source "
        "columns.",
        """
SELECT co.condition_source_value,
       co.condition_source_concept_id,
       s.concept_name AS source_concept_name,
       s.standard_concept AS source_standard,
       count(*) AS records
FROM cdm.condition_occurrence AS co
LEFT JOIN cdm.concept AS s ON s.concept_id = co.condition_source_concept_id
WHERE co.condition_concept_id = 0
GROUP BY ALL
ORDER BY records DESC, co.condition_source_value
""",
    ),
    VocabExample(
        "Maps to: from a code to its standard concept",
        "`cdm.concept_relationship` rows with `relationship_id = 'Maps to'` lead from a "
        "concept to the standard concept to use instead; a standard concept maps to "
        "itself. The usual pattern starts from a vocabulary code "
        "(`concept_code` with `vocabulary_id`) and follows 'Maps to'.",
        """
SELECT src.concept_code, src.vocabulary_id, src.concept_name AS source_name,
       cr.concept_id_2 AS standard_concept_id, std.concept_name AS standard_name
FROM cdm.concept AS src
JOIN cdm.concept_relationship AS cr
  ON cr.concept_id_1 = src.concept_id AND cr.relationship_id = 'Maps to'
JOIN cdm.concept AS std ON std.concept_id = cr.concept_id_2
WHERE src.vocabulary_id = 'SNOMED' AND src.concept_code = '44054006'
""",
    ),
    VocabExample(
        "Which concepts have a Maps to row",
        "Before relying on 'Maps to', check which concepts have such a row. In a full "
        "vocabulary most non-standard concepts map to a standard one; the result below "
        "shows what this database has.",
        """
SELECT CASE WHEN c.standard_concept = 'S' THEN 'standard' ELSE 'non-standard' END AS kind,
       count(DISTINCT c.concept_id) AS concepts,
       count(DISTINCT cr.concept_id_1) AS with_maps_to
FROM cdm.concept AS c
LEFT JOIN cdm.concept_relationship AS cr
  ON cr.concept_id_1 = c.concept_id AND cr.relationship_id = 'Maps to'
GROUP BY ALL
ORDER BY kind DESC
""",
    ),
    VocabExample(
        "Descendants through concept_ancestor",
        "To include every more specific concept under a general one (all kinds of "
        "diabetes under 'Diabetes mellitus'), join the event's concept to "
        "`descendant_concept_id` of `cdm.concept_ancestor` and filter on "
        "`ancestor_concept_id`. Every standard concept is its own ancestor at level 0, "
        "so the concept itself is always included. The query compares that with "
        "matching the concept alone; the two counts differ only where the hierarchy "
        "has rows below the concept.",
        """
SELECT
  (SELECT count(DISTINCT co.person_id)
   FROM cdm.condition_occurrence AS co
   JOIN cdm.concept_ancestor AS ca ON ca.descendant_concept_id = co.condition_concept_id
   WHERE ca.ancestor_concept_id = 201826) AS persons_via_ancestor,
  (SELECT count(DISTINCT person_id)
   FROM cdm.condition_occurrence
   WHERE condition_concept_id = 201826) AS persons_direct
""",
    ),
    VocabExample(
        "A group of conditions by name when there is no hierarchy",
        "Without hierarchy rows, a question about a family of conditions is answered "
        "by collecting the concepts by name (and checking the list), then filtering on "
        "them.",
        """
SELECT c.concept_id, c.concept_name, count(DISTINCT co.person_id) AS persons
FROM cdm.condition_occurrence AS co
JOIN cdm.concept AS c ON c.concept_id = co.condition_concept_id
WHERE c.concept_name ILIKE '%diabetes%'
GROUP BY ALL
ORDER BY persons DESC, c.concept_id
""",
    ),
    VocabExample(
        "Drugs: products, ingredients and drug_era",
        "`drug_exposure.drug_concept_id` is the product that was recorded (a clinical "
        "drug, a branded pack, a vaccine); `drug_era.drug_concept_id` is an ingredient "
        "(concept class 'Ingredient'). For 'persons who took acetaminophen', "
        "`drug_era` by the ingredient id is the direct route; matching product names in "
        "`drug_exposure` is the fallback when no ingredient hierarchy links products "
        "to ingredients.",
        """
SELECT
  (SELECT count(DISTINCT person_id) FROM cdm.drug_era
   WHERE drug_concept_id = 1125315) AS persons_by_ingredient_era,
  (SELECT count(DISTINCT de.person_id)
   FROM cdm.drug_exposure AS de
   JOIN cdm.concept AS c ON c.concept_id = de.drug_concept_id
   WHERE c.concept_name ILIKE '%acetaminophen%') AS persons_by_product_name
""",
    ),
    VocabExample(
        "Type concepts: where a record came from",
        "`*_type_concept_id` columns hold concepts of domain 'Type Concept' that tell "
        "the provenance of a row, for example a diagnosis from an EHR encounter versus "
        "one the patient reported.",
        """
SELECT co.condition_type_concept_id, c.concept_name, count(*) AS records
FROM cdm.condition_occurrence AS co
JOIN cdm.concept AS c ON c.concept_id = co.condition_type_concept_id
GROUP BY ALL
ORDER BY records DESC
""",
    ),
    VocabExample(
        "Concept id 0: no matching concept",
        "0 is the concept 'No matching concept'. Rows with 0 in their main concept "
        "column exist but were not coded; count them separately or leave them out, "
        "rather than treating 0 as a real condition or measurement.",
        """
SELECT 'condition_occurrence' AS table_name,
       count(*) FILTER (WHERE condition_concept_id = 0) AS rows_with_0, count(*) AS all_rows
FROM cdm.condition_occurrence
UNION ALL
SELECT 'measurement', count(*) FILTER (WHERE measurement_concept_id = 0), count(*)
FROM cdm.measurement
UNION ALL
SELECT 'drug_exposure', count(*) FILTER (WHERE drug_concept_id = 0), count(*)
FROM cdm.drug_exposure
ORDER BY table_name
""",
    ),
)
