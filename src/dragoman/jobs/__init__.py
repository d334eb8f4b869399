"""Document jobs: files translated in the background (DeepL's /v2/document, LibreTranslate's
/translate_file, the native /v1/documents, `dragoman translate FILE`). Above the translation
service and the file formats, below the API: `service.Jobs` takes uploads and answers for
them, `runner` sends a file's segments through the service, `store` keeps jobs (a folder, or a
Redis-protocol server in `store_redis`)."""
