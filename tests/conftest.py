"""The fixtures every stage may use, registered once under their module's name (a test never imports
a fixture; pytest reads ``pytest_plugins`` only here)."""

pytest_plugins = [
    "tests.support",  # built_site, test_gateway, gateway, usual_umask
    "tests.postgres",  # postgres
    "tests.imap",  # dovecot, mailbox
    "tests.databases",  # database_kind, db_url, empty_db_url, template_db, postgres_template
    "tests.browser",  # browser, page, mobile_page
]
