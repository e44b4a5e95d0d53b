"""The servers: the MySQL wire protocol (:mod:`rivulet.server.mysql`) and the HTTP/JSON API
(:mod:`rivulet.server.http`), with the users and TLS both share (:mod:`rivulet.server.auth`).
"""
