--
-- PostgreSQL database dump
--

\restrict f76HV1FWcmgVN3Yx2PYuuGumOyHMFA5kpwk6cPd6pXJmVztONRAm2GFyBenGQAH

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: checkpoint_blobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_blobs (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    channel text NOT NULL,
    version text NOT NULL,
    type text NOT NULL,
    blob bytea
);


--
-- Name: checkpoint_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_migrations (
    v integer NOT NULL
);


--
-- Name: checkpoint_writes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_writes (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    checkpoint_id text NOT NULL,
    task_id text NOT NULL,
    idx integer NOT NULL,
    channel text NOT NULL,
    type text,
    blob bytea NOT NULL,
    task_path text DEFAULT ''::text NOT NULL
);


--
-- Name: checkpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoints (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    checkpoint_id text NOT NULL,
    parent_checkpoint_id text,
    type text,
    checkpoint jsonb NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL
);


--
-- Data for Name: checkpoint_blobs; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) FROM stdin;
t-bigint		__start__	00000000000000000000000000000001.0.49855994000023707	msgpack	\\x81a362696701
t-bigint		all	00000000000000000000000000000003.0.9670478149228762	msgpack	\\x93cf0020000000000001cf7fffffffffffffffd3ffdfffffffffffff
\.


--
-- Data for Name: checkpoint_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.checkpoint_migrations (v) FROM stdin;
0
1
2
3
4
5
6
7
8
9
\.


--
-- Data for Name: checkpoint_writes; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) FROM stdin;
t-bigint		1f1f1c23-ed27-695d-bfff-a868ea10e3f5	3976141f-cdc2-7e0e-88e7-bc838a6cb1e9	0	big	msgpack	\\x01	~__pregel_pull, __start__
t-bigint		1f1f1c23-ed27-695d-bfff-a868ea10e3f5	3976141f-cdc2-7e0e-88e7-bc838a6cb1e9	1	branch:to:grow	null	\\x	~__pregel_pull, __start__
t-bigint		1f1f1c23-ed81-6ef6-8000-7052320fb4a0	408199e4-1a28-8481-be04-639a7d5ae5aa	0	big	msgpack	\\xcf8000000000000000	~__pregel_pull, grow
t-bigint		1f1f1c23-ed81-6ef6-8000-7052320fb4a0	408199e4-1a28-8481-be04-639a7d5ae5aa	1	neg	msgpack	\\xd38000000000000000	~__pregel_pull, grow
t-bigint		1f1f1c23-ed81-6ef6-8000-7052320fb4a0	408199e4-1a28-8481-be04-639a7d5ae5aa	2	top	msgpack	\\xcfffffffffffffffff	~__pregel_pull, grow
t-bigint		1f1f1c23-ed81-6ef6-8000-7052320fb4a0	408199e4-1a28-8481-be04-639a7d5ae5aa	3	all	msgpack	\\x93cf0020000000000001cf7fffffffffffffffd3ffdfffffffffffff	~__pregel_pull, grow
\.


--
-- Data for Name: checkpoints; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) FROM stdin;
t-bigint		1f1f1c23-ed27-695d-bfff-a868ea10e3f5	\N	\N	{"v": 4, "id": "1f1f1c23-ed27-695d-bfff-a868ea10e3f5", "ts": "2026-12-06T22:13:20.512636+00:00", "versions_seen": {"__input__": {}}, "channel_values": {}, "channel_versions": {"__start__": "00000000000000000000000000000001.0.49855994000023707"}, "updated_channels": ["__start__"]}	{"step": -1, "source": "input", "parents": {}}
t-bigint		1f1f1c23-ed81-6ef6-8000-7052320fb4a0	1f1f1c23-ed27-695d-bfff-a868ea10e3f5	\N	{"v": 4, "id": "1f1f1c23-ed81-6ef6-8000-7052320fb4a0", "ts": "2026-12-06T22:13:20.549620+00:00", "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.49855994000023707"}}, "channel_values": {"big": 1, "branch:to:grow": null}, "channel_versions": {"big": "00000000000000000000000000000002.0.15084410539046778", "__start__": "00000000000000000000000000000002.0.15084410539046778", "branch:to:grow": "00000000000000000000000000000002.0.15084410539046778"}, "updated_channels": ["big", "branch:to:grow"]}	{"step": 0, "source": "loop", "parents": {}}
t-bigint		1f1f1c23-edab-6b47-8001-c0a7d4bcd640	1f1f1c23-ed81-6ef6-8000-7052320fb4a0	\N	{"v": 4, "id": "1f1f1c23-edab-6b47-8001-c0a7d4bcd640", "ts": "2026-12-06T22:13:20.566728+00:00", "versions_seen": {"grow": {"branch:to:grow": "00000000000000000000000000000002.0.15084410539046778"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.49855994000023707"}}, "channel_values": {"big": 9223372036854775808, "neg": -9223372036854775808, "top": 18446744073709551615}, "channel_versions": {"all": "00000000000000000000000000000003.0.9670478149228762", "big": "00000000000000000000000000000003.0.9670478149228762", "neg": "00000000000000000000000000000003.0.9670478149228762", "top": "00000000000000000000000000000003.0.9670478149228762", "__start__": "00000000000000000000000000000002.0.15084410539046778", "branch:to:grow": "00000000000000000000000000000003.0.9670478149228762"}, "updated_channels": ["all", "big", "neg", "top"]}	{"step": 1, "source": "loop", "parents": {}}
\.


--
-- Name: checkpoint_blobs checkpoint_blobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_blobs
    ADD CONSTRAINT checkpoint_blobs_pkey PRIMARY KEY (thread_id, checkpoint_ns, channel, version);


--
-- Name: checkpoint_migrations checkpoint_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_migrations
    ADD CONSTRAINT checkpoint_migrations_pkey PRIMARY KEY (v);


--
-- Name: checkpoint_writes checkpoint_writes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_writes
    ADD CONSTRAINT checkpoint_writes_pkey PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx);


--
-- Name: checkpoints checkpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoints
    ADD CONSTRAINT checkpoints_pkey PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id);


--
-- Name: checkpoint_blobs_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoint_blobs_thread_id_idx ON public.checkpoint_blobs USING btree (thread_id);


--
-- Name: checkpoint_writes_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoint_writes_thread_id_idx ON public.checkpoint_writes USING btree (thread_id);


--
-- Name: checkpoints_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoints_thread_id_idx ON public.checkpoints USING btree (thread_id);


--
-- PostgreSQL database dump complete
--

\unrestrict f76HV1FWcmgVN3Yx2PYuuGumOyHMFA5kpwk6cPd6pXJmVztONRAm2GFyBenGQAH

