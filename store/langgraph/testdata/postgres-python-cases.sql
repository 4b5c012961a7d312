--
-- PostgreSQL database dump
--

\restrict 9Gdgja49W53sOoaQN2ByXyHBPM8HAIA3TV17MoTSSoaSFkHOxAe0ewWgXFqXVYF

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
t-func		__start__	00000000000000000000000000000001.0.7004666555245674	msgpack	\\x81a16e03
t-func		__end__	00000000000000000000000000000002.0.14287647140326976	msgpack	\\x84a16106a1620ca26f6ba3796573a474657874a936207468656e203132
t-func		__previous__	00000000000000000000000000000002.0.14287647140326976	msgpack	\\x84a16106a1620ca26f6ba3796573a474657874a936207468656e203132
t-update		__start__	00000000000000000000000000000001.0.25061202776091285	msgpack	\\x81a5746f706963a67461626c6573
t-parallel		__start__	00000000000000000000000000000001.0.7600268499116958	msgpack	\\x81a4646f6e6590
t-parallel		done	00000000000000000000000000000002.0.47713128020979956	msgpack	\\x90
t-parallel		done	00000000000000000000000000000003.0.34342131035608514	msgpack	\\x91a2696e
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
t-func		1f1f1bea-2ba6-6152-bfff-24411d432201	ae19a5d2-8fec-e411-df68-d8914da1b19a	0	__return__	msgpack	\\x06	~__pregel_push, ~__pregel_pull, flow, 0000000000, 0000000001
t-func		1f1f1bea-2ba6-6152-bfff-24411d432201	dfdb3ffc-5485-cd65-bb7b-775afee44de9	-3	__interrupt__	msgpack	\\x91c7600293af6c616e6767726170682e7479706573a9496e7465727275707482a576616c756582a87175657374696f6eab6b65657020676f696e673fa16106a26964d9206566633564366335636162653564396531386261396231343938663737666137	~__pregel_pull, flow
t-func		1f1f1bea-2ba6-6152-bfff-24411d432201	00000000-0000-0000-0000-000000000000	-4	__resume__	msgpack	\\xa3796573	
t-func		1f1f1bea-2ba6-6152-bfff-24411d432201	6d21757d-443f-04e8-c4ad-16bf8edbac25	0	__return__	msgpack	\\x0c	~__pregel_push, ~__pregel_pull, flow, 0000000001, 0000000001
t-func		1f1f1bea-2ba6-6152-bfff-24411d432201	c64a9e31-b510-5f26-4104-f3c53651c8d2	0	__return__	msgpack	\\xa936207468656e203132	~__pregel_push, ~__pregel_pull, flow, 0000000002, 0000000001
t-func		1f1f1bea-2ba6-6152-bfff-24411d432201	dfdb3ffc-5485-cd65-bb7b-775afee44de9	-4	__resume__	msgpack	\\x91a3796573	~__pregel_pull, flow
t-func		1f1f1bea-2ba6-6152-bfff-24411d432201	dfdb3ffc-5485-cd65-bb7b-775afee44de9	1	__end__	msgpack	\\x84a16106a1620ca26f6ba3796573a474657874a936207468656e203132	~__pregel_pull, flow
t-func		1f1f1bea-2ba6-6152-bfff-24411d432201	dfdb3ffc-5485-cd65-bb7b-775afee44de9	2	__previous__	msgpack	\\x84a16106a1620ca26f6ba3796573a474657874a936207468656e203132	~__pregel_pull, flow
t-update		1f1f1bea-2c20-6dc8-bfff-1a7e0e9810bd	e5e78cb5-3b55-55a5-47ac-d2f616c773f6	0	topic	msgpack	\\xa67461626c6573	~__pregel_pull, __start__
t-update		1f1f1bea-2c20-6dc8-bfff-1a7e0e9810bd	e5e78cb5-3b55-55a5-47ac-d2f616c773f6	1	branch:to:ask	null	\\x	~__pregel_pull, __start__
t-update		1f1f1bea-2c95-6d18-8000-782d278a3188	00000000-0000-0000-0000-000000000000	0	topic	msgpack	\\xa4726f7773	
t-update		1f1f1bea-2c95-6d18-8000-782d278a3188	00000000-0000-0000-0000-000000000000	1	notes	msgpack	\\x91a775706461746564	
t-update		1f1f1bea-2c95-6d18-8000-782d278a3188	efde98e7-eaa0-eb9d-e053-eb6ad0d479ac	-3	__interrupt__	msgpack	\\x91c75d0293af6c616e6767726170682e7479706573a9496e7465727275707482a576616c756581a87175657374696f6eab61626f757420726f77733fa26964d9206139366366666161333466316534333561396232393063316434363238316266	~__pregel_pull, ask
t-parallel		1f1f1bea-2d9e-6bec-bfff-50891e6ca89c	b0b7e8b3-74a5-8428-96b3-23882c804d13	0	done	msgpack	\\x90	~__pregel_pull, __start__
t-parallel		1f1f1bea-2d9e-6bec-bfff-50891e6ca89c	b0b7e8b3-74a5-8428-96b3-23882c804d13	1	branch:to:start	null	\\x	~__pregel_pull, __start__
t-parallel		1f1f1bea-2e30-6123-8000-e49ca761f69f	589c010a-c93e-165b-0ceb-f9ebf654348a	0	done	msgpack	\\x91a2696e	~__pregel_pull, start
t-parallel		1f1f1bea-2e30-6123-8000-e49ca761f69f	589c010a-c93e-165b-0ceb-f9ebf654348a	1	branch:to:bad	null	\\x	~__pregel_pull, start
t-parallel		1f1f1bea-2e30-6123-8000-e49ca761f69f	589c010a-c93e-165b-0ceb-f9ebf654348a	2	branch:to:ok1	null	\\x	~__pregel_pull, start
t-parallel		1f1f1bea-2e30-6123-8000-e49ca761f69f	589c010a-c93e-165b-0ceb-f9ebf654348a	3	branch:to:ok2	null	\\x	~__pregel_pull, start
t-parallel		1f1f1bea-2e41-6d58-8001-753f18762f7e	e13ef61b-ce50-f3eb-d996-557c237ddb49	0	done	msgpack	\\x91a36f6b31	~__pregel_pull, ok1
t-parallel		1f1f1bea-2e41-6d58-8001-753f18762f7e	c2c62850-bd51-b3fa-d8c4-911187cbdaeb	0	done	msgpack	\\x91a36f6b32	~__pregel_pull, ok2
t-parallel		1f1f1bea-2e41-6d58-8001-753f18762f7e	cc319249-ca08-b5e6-a51c-3804e09899ea	-1	__error__	msgpack	\\xb756616c75654572726f7228276261642062726f6b652729	~__pregel_pull, bad
\.


--
-- Data for Name: checkpoints; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) FROM stdin;
t-func		1f1f1bea-2ba6-6152-bfff-24411d432201	\N	\N	{"v": 4, "id": "1f1f1bea-2ba6-6152-bfff-24411d432201", "ts": "2026-12-06T21:47:30.139978+00:00", "versions_seen": {"__input__": {}}, "channel_values": {}, "channel_versions": {"__start__": "00000000000000000000000000000001.0.7004666555245674"}, "updated_channels": ["__start__"]}	{"step": -1, "source": "input", "parents": {}}
t-func		1f1f1bea-2bf1-6b78-8000-3a82c20837ec	1f1f1bea-2ba6-6152-bfff-24411d432201	\N	{"v": 4, "id": "1f1f1bea-2bf1-6b78-8000-3a82c20837ec", "ts": "2026-12-06T21:47:30.170943+00:00", "versions_seen": {"flow": {"__start__": "00000000000000000000000000000001.0.7004666555245674"}, "double": {}, "describe": {}, "__input__": {}, "__interrupt__": {"__start__": "00000000000000000000000000000001.0.7004666555245674"}}, "channel_values": {}, "channel_versions": {"__end__": "00000000000000000000000000000002.0.14287647140326976", "__start__": "00000000000000000000000000000002.0.14287647140326976", "__previous__": "00000000000000000000000000000002.0.14287647140326976"}, "updated_channels": ["__end__", "__previous__"]}	{"step": 0, "source": "loop", "parents": {}}
t-update		1f1f1bea-2c20-6dc8-bfff-1a7e0e9810bd	\N	\N	{"v": 4, "id": "1f1f1bea-2c20-6dc8-bfff-1a7e0e9810bd", "ts": "2026-12-06T21:47:30.190269+00:00", "versions_seen": {"__input__": {}}, "channel_values": {}, "channel_versions": {"__start__": "00000000000000000000000000000001.0.25061202776091285"}, "updated_channels": ["__start__"]}	{"step": -1, "source": "input", "parents": {}}
t-update		1f1f1bea-2c95-6d18-8000-782d278a3188	1f1f1bea-2c20-6dc8-bfff-1a7e0e9810bd	\N	{"v": 4, "id": "1f1f1bea-2c95-6d18-8000-782d278a3188", "ts": "2026-12-06T21:47:30.238152+00:00", "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.25061202776091285"}}, "channel_values": {"topic": "tables", "branch:to:ask": null}, "channel_versions": {"topic": "00000000000000000000000000000002.0.9138690501199407", "__start__": "00000000000000000000000000000002.0.9138690501199407", "branch:to:ask": "00000000000000000000000000000002.0.9138690501199407"}, "updated_channels": ["branch:to:ask", "topic"]}	{"step": 0, "source": "loop", "parents": {}}
t-parallel		1f1f1bea-2d9e-6bec-bfff-50891e6ca89c	\N	\N	{"v": 4, "id": "1f1f1bea-2d9e-6bec-bfff-50891e6ca89c", "ts": "2026-12-06T21:47:30.346683+00:00", "versions_seen": {"__input__": {}}, "channel_values": {}, "channel_versions": {"__start__": "00000000000000000000000000000001.0.7600268499116958"}, "updated_channels": ["__start__"]}	{"step": -1, "source": "input", "parents": {}}
t-parallel		1f1f1bea-2e30-6123-8000-e49ca761f69f	1f1f1bea-2d9e-6bec-bfff-50891e6ca89c	\N	{"v": 4, "id": "1f1f1bea-2e30-6123-8000-e49ca761f69f", "ts": "2026-12-06T21:47:30.406186+00:00", "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.7600268499116958"}}, "channel_values": {"branch:to:start": null}, "channel_versions": {"done": "00000000000000000000000000000002.0.47713128020979956", "__start__": "00000000000000000000000000000002.0.47713128020979956", "branch:to:start": "00000000000000000000000000000002.0.47713128020979956"}, "updated_channels": ["branch:to:start", "done"]}	{"step": 0, "source": "loop", "parents": {}}
t-parallel		1f1f1bea-2e41-6d58-8001-753f18762f7e	1f1f1bea-2e30-6123-8000-e49ca761f69f	\N	{"v": 4, "id": "1f1f1bea-2e41-6d58-8001-753f18762f7e", "ts": "2026-12-06T21:47:30.413471+00:00", "versions_seen": {"start": {"branch:to:start": "00000000000000000000000000000002.0.47713128020979956"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.7600268499116958"}}, "channel_values": {"branch:to:bad": null, "branch:to:ok1": null, "branch:to:ok2": null}, "channel_versions": {"done": "00000000000000000000000000000003.0.34342131035608514", "__start__": "00000000000000000000000000000002.0.47713128020979956", "branch:to:bad": "00000000000000000000000000000003.0.34342131035608514", "branch:to:ok1": "00000000000000000000000000000003.0.34342131035608514", "branch:to:ok2": "00000000000000000000000000000003.0.34342131035608514", "branch:to:start": "00000000000000000000000000000003.0.34342131035608514"}, "updated_channels": ["branch:to:bad", "branch:to:ok1", "branch:to:ok2", "done"]}	{"step": 1, "source": "loop", "parents": {}}
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

\unrestrict 9Gdgja49W53sOoaQN2ByXyHBPM8HAIA3TV17MoTSSoaSFkHOxAe0ewWgXFqXVYF

