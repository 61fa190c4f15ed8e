"""The test suite (a regular package, so that a site-packages `tests` package, such as the one
Pgx installs, cannot shadow it)."""
