"""What several sections of the report share: views and tables computed from the context
and the data (report/data.py) that are not a section of their own. A section
(report/sections/) reads the context, the data and these parts, never another section."""
