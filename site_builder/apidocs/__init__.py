"""API documentation: Sphinx inventories (read, fetch, cache) and the lookup from a Python
object's full name to its documentation page.

``inventory`` parses ``objects.inv`` files (untrusted data: size-capped, every link checked
to lie under the configured base URL) into ``ApiDocs``; ``fetch`` downloads them over
http(s) into the records folder's ``_inventories/`` cache. Imports only the shared bottom
(``config``, ``errors``, ``fs``, ``names``); ``site`` and ``commands`` may import it.
"""
