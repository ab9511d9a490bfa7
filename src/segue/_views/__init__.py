"""People-facing views of a transcript: the display projection of a row (``project``), windows
and items in one streaming pass (``windows``), and exports to Markdown, HTML and JSON
(``export``). Pure functions over rows; reading the store is the caller's job."""
