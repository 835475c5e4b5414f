window.__kbSearch({{ name|tojson }},{{ texts|tojson }});
