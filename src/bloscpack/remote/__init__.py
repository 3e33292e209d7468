"""Containers at URLs (fsspec, the optional extra ``bloscpack[remote]``): byte sources that
fetch only the ranges a read needs, directories of chunk objects, and uploads that publish a
container whole or not at all."""
