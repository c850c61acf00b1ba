"""The fixtures every stage may use, from the helper modules that define them.

A test names a fixture as an argument; it never imports one. pytest reads
``pytest_plugins`` only in this, the top conftest.py. Each module is registered once,
under its package name (``tests.postgres``), the name the tests import its helpers by.
Stages: unit (no process, no socket), services (PostgreSQL, Redis, SMTP, subprocesses),
site, embedded, development, container.
"""

pytest_plugins = [
    "tests.support",  # built_site, test_gateway, gateway
    "tests.postgres",  # postgres
    "tests.imap",  # dovecot, mailbox
    "tests.databases",  # database_kind, db_url, empty_db_url, template_db, postgres_template
    "tests.browser",  # browser, page, mobile_page
]
