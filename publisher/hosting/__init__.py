"""Building and serving the site in production.

- build_plugins.py: what the build adds to Reflex's output (robots.txt, the prerendered
  not-found page, static pages without the app, the backend URL rule, the dev host);
- static_or_app.py: which pages start the app, decided from the pages at build time;
- middleware.py: slash-less URLs without a redirect, and the headers of every response;
- production.py: ``publisher-serve``, the production command (prebuilt site and backend on one port);
- graceful_stop.py: on SIGTERM, submits in flight finish before a worker stops.
"""
