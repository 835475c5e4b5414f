"""The site's URL scheme, shared by the site (:mod:`kb.site`) and the search (:mod:`kb.search`), which names for each
hit the page that shows it: :mod:`kb.urls.paths` (the file of a rule, term, article or card; names readable and
portable) and :mod:`kb.urls.where` (where a stored node of any version and language is shown today)."""
